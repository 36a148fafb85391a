def f():
    print("debug")
    return 1


def g():
    x = 2
