"""Spanish dates: Django's, but a short date with the month in words, as the English one."""

SHORT_DATE_FORMAT = "j b Y"  # 6 dic 2026
SHORT_DATETIME_FORMAT = "j b Y, H:i"  # 6 dic 2026, 09:05
