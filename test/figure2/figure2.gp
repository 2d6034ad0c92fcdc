# test/figure2/figure2.gp
#	Plots the data of figure2.c like the article's Figure 2: achievable
#	utilization against M/N, one panel per algorithm, and the distinct subsets
#	of Ringsteady and Rocksteadier.
#	gnuplot -e "data='figure2.csv'; output='figure2.png'" figure2.gp
set terminal pngcairo size 1500,900 font ",10"
set output output
set datafile separator ","
set multiplot layout 2,3 title "Connection balance, k = 20, 1 ≤ M ≤ 256, 20 ≤ N ≤ 256, M·k > N (after Figure 2 of Reinventing Backend Subsetting at Google)"
set logscale x 2
set xrange [1.0/32:16]
set xtics ("1/32" 0.03125, "1/16" 0.0625, "1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16)
set yrange [0:1.05]
set xlabel "M / N (frontends / backends)"
set ylabel "achievable utilization"
set grid
set key off
unset colorbox
set title "(a) random"
plot data every ::1 using ($1/$2):3 with points pt 7 ps 0.12 lc rgb "#c0392b"
set title "(b) deterministic"
plot data every ::1 using ($1/$2):4 with points pt 7 ps 0.12 lc rgb "#2c3e50"
set title "(c) Ringsteady"
plot data every ::1 using ($1/$2):5 with points pt 7 ps 0.12 lc rgb "#8e44ad"
set title "(d) Ringsteady with backend scaling"
plot data every ::1 using ($1/$2):6 with points pt 7 ps 0.12 lc rgb "#2980b9"
set title "(e) Rocksteadier, L = 10"
plot data every ::1 using ($1/$2):7 with points pt 7 ps 0.12 lc rgb "#27ae60"
set title "(f) subset diversity (N = k = 20: one subset, at the bottom)"
set ylabel "distinct subsets / M"
set key bottom left
plot data every ::1 using ($1/$2):($8/$1) with points pt 7 ps 0.12 lc rgb "#2980b9" title "Ringsteady (scaled)", \
     data every ::1 using ($1/$2):($9/$1) with points pt 7 ps 0.12 lc rgb "#27ae60" title "Rocksteadier"
unset multiplot
