// The open houses the sync tests schedule, and the clock they run at: Saturday 2026-11-28 1–3 PM
// and Sunday 2026-11-29 11 AM–1 PM in Chicago (RESO OpenHouse fields), with the tour text the
// mapping writes for each.
export const SAT = {
  OpenHouseStartTime: '2026-11-28T19:00:00Z',
  OpenHouseEndTime: '2026-11-28T21:00:00Z',
  OpenHouseStatus: 'Active',
};
export const SUN = {
  OpenHouseStartTime: '2026-11-29T17:00:00Z',
  OpenHouseEndTime: '2026-11-29T19:00:00Z',
  OpenHouseStatus: 'Active',
};
export const SAT_TEXT = 'Sat, Nov 28, 1:00 PM – 3:00 PM';
export const SUN_TEXT = 'Sun, Nov 29, 11:00 AM – 1:00 PM';

/** a run's test hook that sets its clock to `iso` */
export const at = (iso: string) => ({ now: () => new Date(iso) });
