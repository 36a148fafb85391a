def g():
    # begin
    # end
def f():
    pass
done
