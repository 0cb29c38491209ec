-- The last scannability check of a QR style (server/rendering/scannability.ts), written on create and
-- on every change of its config or brand; null for styles stored before the check existed (qrctl
-- styles check --rescan fills them).
alter table qr_styles add column scannability jsonb;
