// Page text is a string or {en, zh}; the kit's own words come in both languages.

const WORDS = {
  en: {
    play: "Play", pause: "Pause", replay: "Replay", next: "Next", prev: "Back", close: "Close",
    parts: "Parts", legend: "Legend", controls: "Controls", step: (i, n) => `${i} / ${n}`,
    hint: "Drag to turn · pinch or scroll to zoom · tap a part", timeline: "Timeline",
  },
  zh: {
    play: "播放", pause: "暂停", replay: "重播", next: "下一步", prev: "上一步", close: "关闭",
    parts: "部件", legend: "图例", controls: "控制", step: (i, n) => `${i} / ${n}`,
    hint: "拖动旋转 · 双指或滚轮缩放 · 点击部件查看说明", timeline: "时间轴",
  },
};

export function pickLang(requested) {
  const lang = requested ?? document.documentElement.lang ?? "en";
  return String(lang).toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function words(lang) {
  return WORDS[lang];
}

export function resolve(text, lang) {
  if (text == null) return "";
  if (typeof text === "object") return String(text[lang] ?? text.en ?? text.zh ?? "");
  return String(text);
}
