set terminal pngcairo noenhanced size 800,500
set output 'latency.png'
set title 'Retrieve latency, full pipeline (77 calls)'
set xlabel 'ms'
set ylabel 'calls'
set grid
width = 0.025000
set xrange [0:1.0250]
bin(x) = width * floor(x / width) + width / 2
set boxwidth width * 0.9
set style fill solid 0.7
plot 'latency.dat' using (bin($1)):(1.0) smooth freq with boxes notitle
