-- Print runs may render the gs1 codes they hold in the GS1 compressed Digital Link form
-- (docs/gs1.md); the other codes of the run are drawn as usual.
alter table qr_code_exports add column gs1_compressed boolean not null default false;
