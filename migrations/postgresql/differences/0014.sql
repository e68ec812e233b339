-- memory_words is already found by term here: 0013's hash index (a B-tree entry cannot hold a long term).

-- [instead of memory_words_by_word]
