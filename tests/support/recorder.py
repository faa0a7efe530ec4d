"""Records what the decoding loop hands its callbacks."""


class Recorder:
    def __init__(self):
        self.steps, self.blocks = [], []

    def on_step(self, seq, block, tokens, masked):
        self.steps.append((seq, block, list(tokens), list(masked)))

    def on_block(self, seq, block, tokens):
        self.blocks.append((seq, block, list(tokens)))
