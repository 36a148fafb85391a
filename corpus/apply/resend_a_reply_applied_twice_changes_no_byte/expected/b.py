def h():
    x = 2
