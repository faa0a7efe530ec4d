// The learner page's own words, in English and Chinese. What the page says about a question (its
// status, the topic, a refusal, the check) is in that question's language.

// A figure as a person reads it: 2.1179 s is 2.1 s, 541.56 tokens/s is 542.
const round = (x, digits) => Number(Number(x).toFixed(digits));

const WORDS = {
  en: {
    sending: "Sending your question…",
    waiting: (ahead) => `Waiting for the model: ${ahead} ahead of you…`,
    starting: "Starting…",
    explaining: (title) => `Explaining: ${title}`,
    onlyIn: { zh: "available in 中文 only", en: "only in English so far" },
    fromLibrary: "From the library",
    writing: "Writing…",
    fixingTry: (attempt, attempts) => `Fixing (try ${attempt} of ${attempts})…`,
    progress: (doing, blocks, tokens, rate) => `${doing} block ${blocks} · ${tokens} tokens · ${rate} tokens/s`,
    fixingFailed: (why) => `Fixing… the page failed its check (${why})`,
    inBrowser: "in a browser",
    madeFromLibrary: "from the library",
    pageHidden: "Your teacher hid this page.",
    pageShown: "shown again by your teacher",
    made: (tokens, seconds, rate) =>
      `${tokens} tokens${seconds ? ` in ${round(seconds, 1)} s` : ""}${rate ? ` at ${round(rate, 0)} tokens/s` : ""}`,
    checking: (version, made) => `v${version}: ${made} · checking…`,
    checked: "✓ Page checked in a browser",
    checkFailed: (what) => `⚠ Page check: ${what}`,
    stopped: "Stopped. You can ask again.",
    nearest: "Topics the library has that come close:",
    stopping: "Stopping after this block…",
    unchanged: "The model wrote the same page again: it knows this lesson one way and cannot change it yet.",
  },
  zh: {
    sending: "正在发送你的问题……",
    waiting: (ahead) => `排队等待模型：前面还有 ${ahead} 个……`,
    starting: "开始……",
    explaining: (title) => `正在讲解：${title}`,
    onlyIn: { zh: "只有中文版", en: "暂时只有英文版" },
    fromLibrary: "来自资料库",
    writing: "正在写……",
    fixingTry: (attempt, attempts) => `正在修复（第 ${attempt} 次，共 ${attempts} 次）……`,
    progress: (doing, blocks, tokens, rate) => `${doing}第 ${blocks} 块 · ${tokens} 个 token · 每秒 ${rate} 个 token`,
    fixingFailed: (why) => `正在修复……页面没有通过检查（${why}）`,
    inBrowser: "浏览器检查",
    madeFromLibrary: "来自资料库",
    pageHidden: "老师隐藏了这个页面。",
    pageShown: "老师重新显示了这一页",
    made: (tokens, seconds, rate) =>
      `${tokens} 个 token${seconds ? `，用时 ${round(seconds, 1)} 秒` : ""}${rate ? `，每秒 ${round(rate, 0)} 个` : ""}`,
    checking: (version, made) => `第 ${version} 版：${made} · 正在检查……`,
    checked: "✓ 页面已在浏览器中检查通过",
    checkFailed: (what) => `⚠ 页面检查：${what}`,
    stopped: "已停止。你可以重新提问。",
    nearest: "资料库里有这些相近的主题：",
    stopping: "写完这一块就停止……",
    unchanged: "模型又写出了同一页：这节课它只会这一种写法，暂时还改不了。",
  },
};

export function words(lang) {
  return WORDS[lang === "zh" ? "zh" : "en"];
}
