replacement content
:start_line:5
=======
more content
