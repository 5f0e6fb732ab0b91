"""English dates, day first with the month in words (Django's are US style: 12/06/2026 for 6 December)."""

DATE_FORMAT = "j F Y"  # 6 December 2026
SHORT_DATE_FORMAT = "j M Y"  # 6 Dec 2026
DATETIME_FORMAT = "j F Y, H:i"  # 6 December 2026, 09:05
SHORT_DATETIME_FORMAT = "j M Y, H:i"  # 6 Dec 2026, 09:05
TIME_FORMAT = "H:i"  # 09:05
MONTH_DAY_FORMAT = "j F"  # 6 December
YEAR_MONTH_FORMAT = "F Y"  # December 2026
