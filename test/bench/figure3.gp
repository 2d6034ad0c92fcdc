# test/bench/figure3.gp
#	Plots bench_jump's CSV like the JumpBackHash paper's Figure 3: time per
#	call against the number of buckets, random 64-bit keys.
#	gnuplot -e "data='figure3.csv'; output='figure3.png'" figure3.gp
set terminal pngcairo size 1000,560 font ",10"
set output output
set datafile separator ","
set key autotitle columnhead
set title "Mapping a random 64-bit key to one of n buckets, per call in C (after Figure 3 of the JumpBackHash paper)"
set logscale x 10
set format x "10^{%T}"
set xrange [1:1e6]
set yrange [0:*]
set xlabel "n (buckets)"
set ylabel "ns per call"
set grid
set key top left
plot data using 1:3 with linespoints pt 7 ps 0.5 lc rgb "#c0392b" title "jumphash (Lamping-Veach)", \
     data using 1:2 with linespoints pt 7 ps 0.5 lc rgb "#27ae60" title "jumpbackhash", \
     data using 1:4 with linespoints pt 7 ps 0.5 lc rgb "#7f8c8d" title "key % n (not consistent)", \
     data using 1:5 with linespoints pt 7 ps 0.5 lc rgb "#2980b9" title "Lemire's multiply-shift (not consistent)"
