content1
content2
