// The words of the landing pages themselves (never the customer's text), in the languages a page
// offers, and the choice among them: landing_config.language when fixed, else the visitor's
// Accept-Language (RFC 9110 quality values), else English.
import { PAGE_LANGUAGES, type PageLanguage } from '../qr-codes/landing-config.js';
import { KeptResults } from '../kept-results.js';

export interface PageWords {
  save_contact: string;
  add_to_calendar: string;
  app_store: string;
  play_store: string;
  open_website: string;
  links: string;
  call: string;
  email: string;
  website: string;
  address: string;
  starts: string;
  ends: string;
  where: string;
  contact: string;
}

export const WORDS: Record<PageLanguage, PageWords> = {
  en: {
    save_contact: 'Add to contacts',
    add_to_calendar: 'Add to calendar',
    app_store: 'Download on the App Store',
    play_store: 'Get it on Google Play',
    open_website: 'Open the website',
    links: 'Links',
    call: 'Call',
    email: 'Email',
    website: 'Website',
    address: 'Address',
    starts: 'Starts',
    ends: 'Ends',
    where: 'Where',
    contact: 'Contact details',
  },
  de: {
    save_contact: 'Zu Kontakten hinzufügen',
    add_to_calendar: 'Zum Kalender hinzufügen',
    app_store: 'Laden im App Store',
    play_store: 'Jetzt bei Google Play',
    open_website: 'Website öffnen',
    links: 'Links',
    call: 'Anrufen',
    email: 'E-Mail',
    website: 'Website',
    address: 'Adresse',
    starts: 'Beginn',
    ends: 'Ende',
    where: 'Ort',
    contact: 'Kontaktdaten',
  },
  fr: {
    save_contact: 'Ajouter aux contacts',
    add_to_calendar: 'Ajouter au calendrier',
    app_store: 'Télécharger dans l’App Store',
    play_store: 'Disponible sur Google Play',
    open_website: 'Ouvrir le site',
    links: 'Liens',
    call: 'Appeler',
    email: 'E-mail',
    website: 'Site web',
    address: 'Adresse',
    starts: 'Début',
    ends: 'Fin',
    where: 'Lieu',
    contact: 'Coordonnées',
  },
  es: {
    save_contact: 'Añadir a contactos',
    add_to_calendar: 'Añadir al calendario',
    app_store: 'Descárgalo en el App Store',
    play_store: 'Disponible en Google Play',
    open_website: 'Abrir el sitio web',
    links: 'Enlaces',
    call: 'Llamar',
    email: 'Correo',
    website: 'Sitio web',
    address: 'Dirección',
    starts: 'Inicio',
    ends: 'Fin',
    where: 'Lugar',
    contact: 'Datos de contacto',
  },
};

/** The words of the pixel page's consent banner (`{who}`: the recipients, `{n}`: the seconds left). */
export interface ConsentWords {
  title: string;
  text: string;
  accept: string;
  decline: string;
  continuing: string;
  redirecting: string;
}

export const CONSENT_WORDS: Record<PageLanguage, ConsentWords> = {
  en: {
    title: 'Your privacy',
    text: 'With your consent, this page shares your visit with {who} for advertising and measurement, using cookies and similar technologies. You continue either way.',
    accept: 'Accept',
    decline: 'Decline',
    continuing: 'Continuing in {n} seconds.',
    redirecting: 'You are being redirected',
  },
  de: {
    title: 'Ihre Privatsphäre',
    text: 'Mit Ihrer Einwilligung teilt diese Seite Ihren Besuch mit {who} für Werbung und Messung, mit Cookies und ähnlichen Techniken. Sie werden in jedem Fall weitergeleitet.',
    accept: 'Zustimmen',
    decline: 'Ablehnen',
    continuing: 'Weiter in {n} Sekunden.',
    redirecting: 'Sie werden weitergeleitet',
  },
  fr: {
    title: 'Votre vie privée',
    text: 'Avec votre consentement, cette page partage votre visite avec {who} à des fins de publicité et de mesure, au moyen de cookies et de technologies similaires. Vous continuez dans tous les cas.',
    accept: 'Accepter',
    decline: 'Refuser',
    continuing: 'Suite dans {n} secondes.',
    redirecting: 'Redirection en cours',
  },
  es: {
    title: 'Tu privacidad',
    text: 'Con tu consentimiento, esta página comparte tu visita con {who} con fines de publicidad y medición, mediante cookies y tecnologías similares. Continuarás en cualquier caso.',
    accept: 'Aceptar',
    decline: 'Rechazar',
    continuing: 'Continuando en {n} segundos.',
    redirecting: 'Te estamos redirigiendo',
  },
};

const SUPPORTED = new Set<string>(PAGE_LANGUAGES);

/** The page language for an Accept-Language header: the supported primary tag of highest quality, else en. */
export function pageLanguage(fixed: PageLanguage | undefined, acceptLanguage: string | undefined): PageLanguage {
  if (fixed) return fixed;
  if (!acceptLanguage) return 'en';
  return byHeader.get(acceptLanguage);
}

function headerLanguage(acceptLanguage: string): PageLanguage {
  let best: PageLanguage = 'en';
  let bestQ = 0;
  for (const part of acceptLanguage.slice(0, 512).split(',')) {
    const [tag, ...params] = part.trim().split(';');
    const primary = tag.trim().toLowerCase().split('-')[0];
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (SUPPORTED.has(primary) && q > bestQ) {
      best = primary as PageLanguage;
      bestQ = q;
    }
  }
  return best;
}

/** Accept-Language headers repeat heavily: their page language is kept for up to 20,000 headers. */
const byHeader = new KeptResults<PageLanguage>(20_000, headerLanguage);
