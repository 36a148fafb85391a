if a:
    go(1)
