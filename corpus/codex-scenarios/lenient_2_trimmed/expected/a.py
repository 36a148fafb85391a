def f():
return 2
