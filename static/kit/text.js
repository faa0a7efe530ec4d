// Page text is a string or {en, zh}; the kit's own words come in both languages.

const WORDS = {
  en: {
    play: "Play", pause: "Pause", replay: "Replay", next: "Next", prev: "Back", close: "Close",
    parts: "Parts", legend: "Legend", controls: "Controls", step: (i, n) => `${i} / ${n}`,
    hint: "Drag to turn · pinch or scroll to zoom · tap a part", timeline: "Timeline",
    quiz: "Check your understanding", question: (i, n) => `Question ${i} of ${n}`,
    correct: "Correct!", wrong: "Not quite.", answerIs: "The answer is:", nextQuestion: "Next question",
    finish: "See my score", score: (k, n) => `You got ${k} of ${n} right.`, retry: "Try again",
  },
  zh: {
    play: "播放", pause: "暂停", replay: "重播", next: "下一步", prev: "上一步", close: "关闭",
    parts: "部件", legend: "图例", controls: "控制", step: (i, n) => `${i} / ${n}`,
    hint: "拖动旋转 · 双指或滚轮缩放 · 点击部件查看说明", timeline: "时间轴",
    quiz: "检验一下", question: (i, n) => `第 ${i} 题（共 ${n} 题）`,
    correct: "答对了！", wrong: "不太对。", answerIs: "正确答案：", nextQuestion: "下一题",
    finish: "看看得分", score: (k, n) => `${n} 题中答对了 ${k} 题。`, retry: "再做一次",
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
