"""Chat files and bookmarks: a conversation saved as JSON and read back, checked field by field."""
