new1
new2
