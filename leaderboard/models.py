# Rankings by period (weekly, monthly, global), computed from the chip ledger, will live here.
