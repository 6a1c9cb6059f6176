"""The Index Lab's measuring side: datasets, sweeps against FAISS and hnswlib, plots (``sextant-lab``)."""
