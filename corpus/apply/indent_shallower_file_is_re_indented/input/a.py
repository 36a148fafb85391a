if a:
    go()
