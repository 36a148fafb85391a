class A:
    def f(self):
return a
