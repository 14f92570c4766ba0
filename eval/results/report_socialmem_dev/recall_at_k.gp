set terminal pngcairo noenhanced size 800,500
set output 'recall_at_k.png'
set title 'System 1 evidence recall@k'
set xlabel 'k'
set ylabel 'recall (%)'
set key left top
set grid
set yrange [0:100]
plot 'recall_at_k.dat' using 1:2 with linespoints lw 2 title 'bm25', 'recall_at_k.dat' using 1:3 with linespoints lw 2 title 'dense', 'recall_at_k.dat' using 1:4 with linespoints lw 2 title 'full', 'recall_at_k.dat' using 1:5 with linespoints lw 2 title 'full+s2'
