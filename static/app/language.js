// The header's interface-language switch: choosing a language applies it at once (Django's set_language
// remembers it in the language cookie); without scripts its button does.
for (const form of document.querySelectorAll("form.interface-language")) {
  form.querySelector("button").hidden = true;
  form.querySelector("select").addEventListener("change", () => form.requestSubmit());
}
