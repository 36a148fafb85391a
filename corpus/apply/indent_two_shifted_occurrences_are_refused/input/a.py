if a:
    x = 1
if b:
    x = 1
