"""Pictures and print of the offline pages (viz/html_export.py): PNG and GIF slides, the printed handout as PDF,
drawn by headless Chromium. The one layer that starts a browser; above session/ and viz/, below the pages (ui/,
app_pages/), so the layers under it stay pure (tests/test_layout.py)."""
