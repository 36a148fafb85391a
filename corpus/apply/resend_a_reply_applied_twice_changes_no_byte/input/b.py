def h():
    x = 1
