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
    reconnecting: "Connection lost; reconnecting…",
    recovering: "The server is busy recovering; reconnecting…",
    problems: {}, // the server's own messages are English
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
    reconnecting: "连接断开了，正在重新连接……",
    recovering: "服务器正在恢复，正在重新连接……",
    // In place of the server's English message, by error code (docs/protocol.md).
    problems: {
      retry: "写这一页的模型进程停下了，正在重新写。",
      requeued: "写这一页的模型进程停下了，会重新写。",
      unavailable: "讲解服务暂时无法接收问题，请过一分钟再试。",
      rate_limited: "这一个小时里你问了很多问题了，休息一下再来吧！",
      limit: "今天能问的问题已经问完了，明天再来吧！",
      empty_question: "请先输入一个问题。",
      question_too_long: "问题太长了，请控制在 500 个字以内。",
      unknown_thread: "找不到这个对话，或者它不属于这个浏览器。",
      expired: "这次讲解的实时画面已经过期，打开对话就能看到它的页面。",
      stream_failed: "实时画面中断了，重新连接后会继续。",
      generation_failed: "这一页没能写出来。",
      empty_page: "模型没有写出完整的页面。",
      timeout: "这一页写得太久，已经停止。",
      model_unavailable: "模型暂时无法使用，请稍后再试。",
      bad_reply: "模型的回答不是一个页面。",
      prompt_too_long: "这个问题和页面加起来太长，模型装不下。",
      worker_lost: "写这一页的模型进程停下了，没能重新写完。",
    },
  },
};

export function words(lang) {
  return WORDS[lang === "zh" ? "zh" : "en"];
}
