x = 1
if a:
    x = 1
