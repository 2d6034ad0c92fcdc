# test/bench/subsets.gp
#	Plots bench_subsets' CSV: time per call of a subset of k = 20 backends
#	against the number of backends, for every subset function and the
#	Ringsteady post's linear-time method.
#	gnuplot -e "data='subsets.csv'; output='subsets.png'" subsets.gp
set terminal pngcairo size 1000,560 font ",10"
set output output
set datafile separator ","
set datafile missing ""
set title "A subset of k = 20 backends, per call in C, as the fleet grows"
set logscale xy 10
set xrange [100:2.2e9]
set format x "10^{%T}"
set format y "10^{%T}"
set xlabel "N (backends)"
set ylabel "ns per call"
set grid
set key top left
plot data using 1:8 with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title "the Ringsteady post's linear-time method", \
     data using 1:6 with linespoints pt 7 ps 0.6 lc rgb "#2c3e50" title "deterministic_subset" noenhanced, \
     data using 1:7 with linespoints pt 7 ps 0.6 lc rgb "#d35400" title "consistent_subset" noenhanced, \
     data using 1:3 with linespoints pt 7 ps 0.6 lc rgb "#27ae60" title "rocksteadier_subset (L = 10)" noenhanced, \
     data using 1:4 with linespoints pt 7 ps 0.6 lc rgb "#8e44ad" title "random_subset" noenhanced, \
     data using 1:2 with linespoints pt 7 ps 0.6 lc rgb "#2980b9" title "ringsteady_subset" noenhanced, \
     data using 1:5 with linespoints pt 7 ps 0.6 lc rgb "#7f8c8d" title "round_robin_subset" noenhanced
