"""The library of pages the product can answer with, and the router that matches a question to one.

Pure Python (no Django): `records` turns library pages into `LibraryPage` records, `tokens` splits
text into search terms (English stems, Chinese words by jieba), `index` holds the BM25 index over the
records, `router` picks a topic or says none fits, `text` normalises questions and tells their script.
"""
