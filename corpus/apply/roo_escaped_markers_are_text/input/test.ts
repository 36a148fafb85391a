content to find
