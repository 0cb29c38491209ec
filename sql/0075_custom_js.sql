-- custom_js (server/qr-codes/custom-js.ts): a code's own script, served as a separate file on a
-- verified custom domain of its organization. qr_codes.custom_js exists since 0002 (always null
-- until now).

-- A feature of the Enterprise plans only (403 feature_not_in_plan elsewhere).
update plans set features = array_append(features, 'custom_js')
 where tier = 'enterprise' and not ('custom_js' = any(features));

-- At most 10 KB: 10240 bytes of UTF-8 (the service says so with a 422 before this is reached).
alter table qr_codes add constraint qr_codes_custom_js_size
  check (custom_js is null or octet_length(custom_js) between 1 and 10240);
