"""Files on disk, no database: the walk and `.kbxignore`, cited paths and lines."""
