// The shape of synthetic traffic: countries with their languages and network operators, devices
// with their operating systems and browsers, and referrers, each with a weight. Figures are
// plausible, not measured; they make demo analytics look like real traffic.

export interface CountryProfile {
  language: string;
  providers: [string, number, number][]; // name, asn, weight
}

export const COUNTRIES: [string, number, CountryProfile][] = [
  [
    'US',
    24,
    {
      language: 'en',
      providers: [
        ['Verizon', 701, 4],
        ['AT&T', 7018, 4],
        ['T-Mobile US', 21928, 3],
        ['Comcast', 7922, 3],
      ],
    },
  ],
  [
    'DE',
    12,
    {
      language: 'de',
      providers: [
        ['Deutsche Telekom', 3320, 5],
        ['Vodafone Germany', 3209, 3],
        ['Telefonica Germany', 6805, 2],
      ],
    },
  ],
  [
    'GB',
    9,
    {
      language: 'en',
      providers: [
        ['BT', 2856, 3],
        ['Vodafone UK', 25135, 2],
        ['EE', 12576, 3],
        ['Virgin Media', 5089, 2],
      ],
    },
  ],
  [
    'FR',
    7,
    {
      language: 'fr',
      providers: [
        ['Orange', 3215, 4],
        ['SFR', 15557, 2],
        ['Free', 12322, 2],
        ['Bouygues Telecom', 5410, 2],
      ],
    },
  ],
  [
    'IN',
    6,
    {
      language: 'hi',
      providers: [
        ['Reliance Jio', 55836, 5],
        ['Bharti Airtel', 9498, 4],
      ],
    },
  ],
  [
    'BR',
    5,
    {
      language: 'pt',
      providers: [
        ['Claro', 28573, 3],
        ['Vivo', 26599, 3],
        ['TIM Brasil', 26615, 2],
      ],
    },
  ],
  [
    'JP',
    5,
    {
      language: 'ja',
      providers: [
        ['NTT Docomo', 9605, 4],
        ['KDDI', 2516, 3],
        ['SoftBank', 17676, 3],
      ],
    },
  ],
  [
    'CA',
    4,
    {
      language: 'en',
      providers: [
        ['Rogers', 812, 3],
        ['Bell Canada', 577, 3],
      ],
    },
  ],
  [
    'ES',
    4,
    {
      language: 'es',
      providers: [
        ['Movistar', 3352, 4],
        ['Orange Spain', 12479, 2],
      ],
    },
  ],
  [
    'IT',
    4,
    {
      language: 'it',
      providers: [
        ['TIM', 3269, 3],
        ['Vodafone Italia', 30722, 2],
      ],
    },
  ],
  [
    'NL',
    3,
    {
      language: 'nl',
      providers: [
        ['KPN', 1136, 3],
        ['VodafoneZiggo', 33915, 3],
      ],
    },
  ],
  [
    'MX',
    3,
    {
      language: 'es',
      providers: [
        ['Telcel', 28403, 4],
        ['Telmex', 8151, 2],
      ],
    },
  ],
  [
    'AU',
    3,
    {
      language: 'en',
      providers: [
        ['Telstra', 1221, 4],
        ['Optus', 4804, 2],
      ],
    },
  ],
  [
    'PL',
    2,
    {
      language: 'pl',
      providers: [
        ['Orange Polska', 5617, 2],
        ['Play', 39603, 2],
      ],
    },
  ],
  [
    'SE',
    2,
    {
      language: 'sv',
      providers: [
        ['Telia', 3301, 3],
        ['Tele2', 1257, 2],
      ],
    },
  ],
  [
    'CH',
    2,
    {
      language: 'de',
      providers: [
        ['Swisscom', 3303, 3],
        ['Sunrise', 6730, 2],
      ],
    },
  ],
  ['', 1, { language: '', providers: [['', 0, 1]] }],
];

export const DEVICES: [{ type: string; os: [string, number][]; browser: [string, number][] }, number][] = [
  [
    {
      type: 'mobile',
      os: [
        ['iOS', 55],
        ['Android', 45],
      ],
      browser: [
        ['Mobile Safari', 50],
        ['Chrome Mobile', 40],
        ['Samsung Internet', 10],
      ],
    },
    72,
  ],
  [
    {
      type: 'desktop',
      os: [
        ['Windows', 60],
        ['macOS', 30],
        ['Linux', 10],
      ],
      browser: [
        ['Chrome', 60],
        ['Safari', 15],
        ['Edge', 15],
        ['Firefox', 10],
      ],
    },
    17,
  ],
  [
    {
      type: 'tablet',
      os: [
        ['iPadOS', 65],
        ['Android', 35],
      ],
      browser: [
        ['Mobile Safari', 65],
        ['Chrome', 35],
      ],
    },
    7,
  ],
  [{ type: 'other', os: [['', 1]], browser: [['', 1]] }, 2],
  [
    {
      type: 'bot',
      os: [['', 1]],
      browser: [
        ['Googlebot', 2],
        ['bingbot', 1],
      ],
    },
    2,
  ],
];

export const REFERRERS: [string, number][] = [
  ['', 70],
  ['google.com', 8],
  ['instagram.com', 7],
  ['facebook.com', 5],
  ['t.co', 3],
  ['linkedin.com', 3],
  ['tiktok.com', 2],
  ['news.ycombinator.com', 1],
  ['reddit.com', 1],
];
