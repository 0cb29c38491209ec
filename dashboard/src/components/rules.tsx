// Editors for a code's routing rules (conditions, one destination or weighted A/B variants) and
// its schedule (weekly windows in a time zone, fallback destination). They edit the same JSON the
// API takes; the service validates it.
import { CheckboxField, SelectField, TextField } from './ui';
import { enumValues, type Day, type Device, type RoutingRule, type Schedule, type ScheduleWindow } from '../types';

const DEVICES = enumValues<Device>({ mobile: true, tablet: true, desktop: true, bot: true, other: true });
const DAYS = enumValues<Day>({ mon: true, tue: true, wed: true, thu: true, fri: true, sat: true, sun: true });

function list(v: string): string[] | undefined {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? [...new Set(items)] : undefined;
}

function withList<K extends 'os' | 'country' | 'language'>(c: RoutingRule['conditions'], key: K, v: string) {
  const next = { ...c, [key]: list(v) };
  if (!next[key]) delete next[key];
  return next;
}

function move<T>(items: T[], from: number, to: number): T[] {
  const out = [...items];
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}

export function RoutingEditor(props: { rules: RoutingRule[]; onChange(r: RoutingRule[]): void; disabled?: boolean }) {
  const { rules } = props;
  const update = (i: number, r: RoutingRule) => props.onChange(rules.map((x, j) => (j === i ? r : x)));
  return (
    <fieldset disabled={props.disabled}>
      <legend>Routing rules</legend>
      <p class="hint">
        The first rule whose conditions all match sends the visitor to its destination, or splits visitors between
        weighted variants (A/B). Otherwise the code’s destination applies. Business plan and up.
      </p>
      {rules.map((rule, i) => {
        const split = !!rule.variants;
        const n = i + 1;
        return (
          <fieldset key={i} class="rule">
            <legend>Rule {n}</legend>
            <div class="checkbox-row" role="group" aria-label={`Rule ${n}: devices`}>
              <span>Devices:</span>
              {DEVICES.map((d) => (
                <CheckboxField
                  key={d}
                  label={d}
                  checked={!!rule.conditions.device?.includes(d)}
                  onChecked={(on) => {
                    const set = new Set(rule.conditions.device ?? []);
                    if (on) set.add(d);
                    else set.delete(d);
                    const conditions = {
                      ...rule.conditions,
                      device: set.size ? DEVICES.filter((x) => set.has(x)) : undefined,
                    };
                    if (!conditions.device) delete conditions.device;
                    update(i, { ...rule, conditions });
                  }}
                />
              ))}
            </div>
            <div class="grid">
              <TextField
                label={`Rule ${n}: operating systems`}
                value={rule.conditions.os?.join(', ') ?? ''}
                onValue={(v) => update(i, { ...rule, conditions: withList(rule.conditions, 'os', v) })}
                hint="Comma-separated, e.g. iOS, Android"
              />
              <TextField
                label={`Rule ${n}: countries`}
                value={rule.conditions.country?.join(', ') ?? ''}
                onValue={(v) => update(i, { ...rule, conditions: withList(rule.conditions, 'country', v) })}
                hint="ISO codes, e.g. DE, AT"
              />
              <TextField
                label={`Rule ${n}: languages`}
                value={rule.conditions.language?.join(', ') ?? ''}
                onValue={(v) => update(i, { ...rule, conditions: withList(rule.conditions, 'language', v) })}
                hint="e.g. de, en"
              />
              <SelectField
                label={`Rule ${n}: sends to`}
                value={split ? 'split' : 'one'}
                onValue={(v) =>
                  update(
                    i,
                    v === 'split'
                      ? {
                          conditions: rule.conditions,
                          variants: [
                            { destination: rule.destination ?? '', weight: 50 },
                            { destination: '', weight: 50 },
                          ],
                        }
                      : { conditions: rule.conditions, destination: rule.variants?.[0]?.destination ?? '' },
                  )
                }
                options={[
                  { value: 'one', label: 'One destination' },
                  { value: 'split', label: 'A/B variants' },
                ]}
              />
            </div>
            {!split && (
              <TextField
                label={`Rule ${n}: destination URL`}
                type="url"
                value={rule.destination ?? ''}
                onValue={(v) => update(i, { ...rule, destination: v })}
              />
            )}
            {split &&
              rule.variants!.map((variant, k) => (
                <div class="grid" key={k}>
                  <TextField
                    label={`Rule ${n}, variant ${k + 1}: destination URL`}
                    type="url"
                    value={variant.destination}
                    onValue={(v) =>
                      update(i, {
                        ...rule,
                        variants: rule.variants!.map((x, j) => (j === k ? { ...x, destination: v } : x)),
                      })
                    }
                  />
                  <TextField
                    label={`Rule ${n}, variant ${k + 1}: weight`}
                    type="number"
                    min={1}
                    value={String(variant.weight)}
                    onValue={(v) =>
                      update(i, {
                        ...rule,
                        variants: rule.variants!.map((x, j) => (j === k ? { ...x, weight: Number(v) } : x)),
                      })
                    }
                  />
                </div>
              ))}
            <div class="row">
              {split && (
                <button
                  type="button"
                  class="btn small"
                  onClick={() => update(i, { ...rule, variants: [...rule.variants!, { destination: '', weight: 1 }] })}
                >
                  Add variant to rule {n}
                </button>
              )}
              {split && rule.variants!.length > 1 && (
                <button
                  type="button"
                  class="btn small"
                  onClick={() => update(i, { ...rule, variants: rule.variants!.slice(0, -1) })}
                >
                  Remove last variant of rule {n}
                </button>
              )}
              <button
                type="button"
                class="btn small"
                disabled={i === 0}
                onClick={() => props.onChange(move(rules, i, i - 1))}
              >
                Move rule {n} up
              </button>
              <button
                type="button"
                class="btn small"
                disabled={i === rules.length - 1}
                onClick={() => props.onChange(move(rules, i, i + 1))}
              >
                Move rule {n} down
              </button>
              <button
                type="button"
                class="btn small danger"
                onClick={() => props.onChange(rules.filter((_, j) => j !== i))}
              >
                Remove rule {n}
              </button>
            </div>
          </fieldset>
        );
      })}
      <button type="button" class="btn" onClick={() => props.onChange([...rules, { conditions: {}, destination: '' }])}>
        Add a rule
      </button>
    </fieldset>
  );
}

let zones: string[] | undefined;
function timeZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  zones ??= intl.supportedValuesOf?.('timeZone') ?? ['UTC'];
  return zones;
}

export function ScheduleEditor(props: { schedule: Schedule; onChange(s: Schedule): void; disabled?: boolean }) {
  const s = props.schedule;
  const windows = s.windows ?? [];
  const setWindow = (i: number, w: ScheduleWindow) =>
    props.onChange({ ...s, windows: windows.map((x, j) => (j === i ? w : x)) });
  return (
    <fieldset disabled={props.disabled}>
      <legend>Schedule</legend>
      <p class="hint">
        Weekly windows when the code redirects; outside them the fallback applies. Business plan and up.
      </p>
      <CheckboxField
        label="Use the schedule"
        checked={s.enabled}
        onChecked={(enabled) => props.onChange({ ...s, enabled })}
      />
      <div class="grid">
        <TextField
          label="Time zone"
          list="time-zones"
          value={s.timezone ?? ''}
          onValue={(timezone) => props.onChange({ ...s, timezone })}
          hint="IANA name, e.g. Europe/Berlin"
        />
        <datalist id="time-zones">
          {timeZones().map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <TextField
          label="Fallback destination URL"
          type="url"
          value={s.fallback_destination ?? ''}
          onValue={(v) => props.onChange({ ...s, fallback_destination: v.trim() || null })}
          hint="Outside every window; empty: the code answers 410."
        />
      </div>
      {windows.map((w, i) => (
        <fieldset key={i}>
          <legend>Window {i + 1}</legend>
          <div class="checkbox-row" role="group" aria-label={`Window ${i + 1}: days`}>
            {DAYS.map((d) => (
              <CheckboxField
                key={d}
                label={d}
                checked={w.days.includes(d)}
                onChecked={(on) =>
                  setWindow(i, { ...w, days: DAYS.filter((x) => (x === d ? on : w.days.includes(x))) })
                }
              />
            ))}
          </div>
          <div class="grid">
            <TextField
              label={`Window ${i + 1}: from`}
              type="time"
              value={w.start}
              onValue={(start) => setWindow(i, { ...w, start })}
            />
            <TextField
              label={`Window ${i + 1}: until`}
              type="time"
              value={w.end}
              onValue={(end) => setWindow(i, { ...w, end })}
            />
          </div>
          <button
            type="button"
            class="btn small danger"
            onClick={() => props.onChange({ ...s, windows: windows.filter((_, j) => j !== i) })}
          >
            Remove window {i + 1}
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        class="btn"
        onClick={() =>
          props.onChange({
            ...s,
            windows: [...windows, { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }],
          })
        }
      >
        Add a window
      </button>
    </fieldset>
  );
}
