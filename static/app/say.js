// The learner page's words, from Django's catalogs (locale/*/LC_MESSAGES/djangojs.po; msgids are English).
// The page's chrome speaks the interface's language: Django's JavaScriptCatalog (/jsi18n/, loaded before the
// app's modules) defines `gettext`, `ngettext`, `gettext_noop` and `interpolate`. What the page says about a
// question (its status, topic, refusal, check) speaks that question's language, which may be the other one:
// its catalog is /jsi18n/<lang>.json, fetched once as the page starts, without holding the page up (a learner
// who types at once is not kept waiting; until it arrives, those lines are in English).

// "en" or "zh", as base.html marks the page.
export const interfaceLang = document.documentElement.lang === "zh" ? "zh" : "en";

// Plural forms by language without evaluating the catalog's formula (the app's CSP allows no eval): Chinese
// has one form, English two.
const PLURAL = { en: (n) => (n === 1 ? 0 : 1), zh: () => 0 };

async function catalogOf(lang) {
  try {
    const response = await fetch(`/jsi18n/${lang}.json`);
    if (response.ok) return (await response.json()).catalog;
  } catch {
    // offline: the English msgids are shown, which still say what is happening
  }
  return {};
}

const other = interfaceLang === "zh" ? "en" : "zh";
const catalogs = {};
// English needs none: its msgids are its words.
if (other !== "en") catalogOf(other).then((catalog) => { catalogs[other] = catalog; });

function gettextIn(lang, msgid) {
  if (lang === interfaceLang) return gettext(msgid);
  const found = catalogs[lang]?.[msgid];
  return typeof found === "string" ? found : Array.isArray(found) ? found[0] : msgid;
}

function ngettextIn(lang, singular, plural, count) {
  if (lang === interfaceLang) return ngettext(singular, plural, count);
  const found = catalogs[lang]?.[singular];
  const index = PLURAL[lang](count);
  if (Array.isArray(found)) return found[Math.min(index, found.length - 1)];
  return index === 0 ? singular : plural;
}

// The words of one language: `gettext(msgid, values)` and `ngettext(singular, plural, count, values)`, with
// `%(name)s` filled from `values` (and `%(count)s` from `count`). The names are gettext's, so makemessages
// finds the msgids at every call.
export function say(lang) {
  lang = lang === "zh" ? "zh" : "en";
  const fill = (text, values) => (values ? interpolate(text, values, true) : text);
  return {
    lang,
    gettext: (msgid, values) => fill(gettextIn(lang, msgid), values),
    ngettext: (singular, plural, count, values) => fill(ngettextIn(lang, singular, plural, count), { count, ...values }),
  };
}
