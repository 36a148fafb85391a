class A:
    x = 1
    pass
