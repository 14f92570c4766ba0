set terminal pngcairo noenhanced size 900,500
set output 'categories.png'
set title 'recall@10 by question category'
set ylabel 'recall (%)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:100]
set grid ytics
set key left top
set xtics rotate by -30
plot 'categories.dat' using 2:xtic(1) title 'bm25', 'categories.dat' using 3:xtic(1) title 'dense', 'categories.dat' using 4:xtic(1) title 'full', 'categories.dat' using 5:xtic(1) title 'full+s2'
