"""What was measured and how it is written down: the serial protocol's framing and CRC (protocol), units
and platform kinds (kinds), numbers and tables for people (text), results.json/csv (results), the cache
model's figures (model) and the QR codes a screen carries records in (qrdecode). Imports nothing above."""
