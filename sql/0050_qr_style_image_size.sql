-- `imageOptions.imageSize` now has qr-code-styling's meaning (a coefficient of the error correction's
-- capacity: the logo hides at most imageSize x {L 7%, M 15%, Q 25%, H 30%} of the modules, in an odd
-- square of modules) instead of a share of the symbol's area, and `imageOptions.margin` now insets
-- the logo inside its box (as there) instead of clearing modules around it. Every style with a logo
-- (or an imageSize) gets the coefficient whose box is the square of modules the old reading cleared,
-- for a square logo and the sample text the scannability check encodes (29 modules at L, 33 at M
-- and Q, 37 at H): the same modules stay cleared and the logo fills that box less its margin.
-- docs/rendering.md ("Logos: imageSize") says how.
with old as (
  select
    id,
    config,
    coalesce((config #>> '{imageOptions,imageSize}')::numeric, 0.1) as share,
    coalesce((config #>> '{imageOptions,margin}')::numeric, 0) as logo_margin,
    coalesce(config #>> '{qrOptions,errorCorrectionLevel}', 'Q') as level,
    least(
      coalesce((config ->> 'width')::numeric, 300),
      coalesce((config ->> 'height')::numeric, (config ->> 'width')::numeric, 300)
    ) as side,
    (config ->> 'margin')::numeric as quiet_px
  from qr_styles
  where config -> 'image' is not null or config #> '{imageOptions,imageSize}' is not null
),
sized as (
  select
    old.*,
    case level when 'L' then 29 when 'H' then 37 else 33 end as n,
    case level when 'L' then 0.07 when 'M' then 0.15 when 'H' then 0.3 else 0.25 end as capacity
  from old
),
module as (
  select
    sized.*,
    -- the module's size in pixels at `width`, as the renderer laid it out
    case
      when quiet_px is not null and side - 2 * quiet_px > 0 then (side - 2 * quiet_px) / n
      when quiet_px is not null then side / n
      else side / (n + 8)
    end as px
  from sized
),
cleared as (
  select
    module.*,
    -- modules across the old cleared square: every module the logo plus its margin touched
    2 * ceil(n * sqrt(share) / 2 + logo_margin / px - 0.5) + 1 as k
  from module
),
converted as (
  select
    id,
    config,
    case
      when share <= 0 then 0
      else least(1, ceil((least(k, n - 14) ^ 2 + 0.5) / (capacity * n * n) * 10000) / 10000)
    end as image_size
  from cleared
)
update qr_styles s
set config = converted.config
  || jsonb_build_object(
    'imageOptions',
    coalesce(converted.config -> 'imageOptions', '{}'::jsonb) || jsonb_build_object('imageSize', converted.image_size)
  )
from converted
where s.id = converted.id;
