# ruff: noqa
"""A dotted attribute stored by the function itself just before it is read: the read sees that value."""
import torch


class Backend:
    def init_metadata(self, batch):
        self.metadata.prefix_lens = batch.prefix_lens.to("cpu")  # expect: SH201 medium
        seq_prefix_lens = self.metadata.prefix_lens.tolist()
        return seq_prefix_lens

    def dominated_in_a_branch(self, batch, use_mla: bool):
        if use_mla:
            self.metadata.prefix_lens = batch.prefix_lens.cpu()  # expect: SH201 medium
            if batch.extend:
                return self.metadata.prefix_lens.tolist()
        return []

    def not_dominating(self, batch, use_mla: bool):
        if use_mla:
            self.metadata.prefix_lens = batch.prefix_lens.cpu()  # expect: SH201 medium
        return self.metadata.prefix_lens.tolist()  # expect: SH201 medium

    def stored_twice(self, batch):
        self.metadata.prefix_lens = batch.prefix_lens.cpu()  # expect: SH201 medium
        self.metadata.prefix_lens = batch.prefix_lens
        return self.metadata.prefix_lens.tolist()  # expect: SH201 medium

    def owner_replaced(self, batch):
        self.metadata.prefix_lens = batch.prefix_lens.cpu()  # expect: SH201 medium
        self.metadata = batch.metadata
        return self.metadata.prefix_lens.tolist()  # expect: SH201 medium

    def device_store(self, batch):
        self.metadata.prefix_lens = batch.prefix_lens.to("cuda")
        return self.metadata.prefix_lens.tolist()  # expect: SH201 medium  (only a host store is taken)
