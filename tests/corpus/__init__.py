"""PyTorch's own statements about which operations synchronize, as runnable cases for the runtime guard."""
