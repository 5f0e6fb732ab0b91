# Profiles, the chip wallet and its ledger will live here.
