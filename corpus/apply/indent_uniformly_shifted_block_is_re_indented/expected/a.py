class A:
    def f(self):
        x = 2

        return x
