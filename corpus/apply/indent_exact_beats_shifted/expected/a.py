x = 2
if a:
    x = 1
