/**
 * The pages' one stylesheet, served from this origin (`/assets/pages.css`): no CDN, no inline styles, so
 * the policy can say `style-src 'self'`. Mobile first; logical properties, so right-to-left just works.
 */
export const css = `
*,*::before,*::after{box-sizing:border-box}
button,input,select,textarea{font-family:inherit}
html{font-family:"Noto Sans Thaana",system-ui,-apple-system,"Segoe UI",Roboto,"MV Faseyha","Faruma",sans-serif;color:#14213d;background:#f4f6fb;line-height:1.5}
body{margin:0}
main{max-width:34rem;margin:0 auto;padding:1rem}
header.bar{display:flex;justify-content:space-between;align-items:center;gap:1rem;padding:.75rem 1rem;background:#0b3d91;color:#fff}
header.bar a{color:#fff}
.brand{font-weight:700;letter-spacing:.02em}
.langs{display:flex;gap:.75rem;font-size:.95rem}
.card{background:#fff;border-radius:.75rem;padding:1.25rem;margin-block:1rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .75rem}
h2{font-size:1.1rem;margin:1rem 0 .5rem}
.merchant{font-size:.95rem;color:#3d4a66;margin:0 0 .25rem}
.amount{font-size:1.6rem;font-weight:700;margin:.25rem 0}
dl.terms{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:.75rem 0}
dl.terms dt{color:#3d4a66}
dl.terms dd{margin:0;font-weight:600;white-space:nowrap}
label{display:block;font-weight:600;margin-block:.75rem .25rem}
input[type=text],input[type=tel]{width:100%;font-size:1.1rem;padding:.65rem .75rem;border:2px solid #8a94a8;border-radius:.5rem}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #f4a300;outline-offset:2px}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1rem}
button{font-size:1.05rem;font-weight:700;padding:.7rem 1.4rem;border-radius:.5rem;border:2px solid #0b3d91;background:#0b3d91;color:#fff;cursor:pointer;min-height:2.75rem}
button.secondary{background:#fff;color:#0b3d91}
.note{color:#3d4a66;font-size:.95rem}
.notice{background:#e8f0fe;border-inline-start:4px solid #0b3d91;padding:.6rem .8rem;border-radius:.25rem}
.error{background:#fdecea;border-inline-start:4px solid #b3261e;padding:.6rem .8rem;border-radius:.25rem;color:#5f1410}
.banner{background:#f4a300;color:#1f1300;text-align:center;font-weight:700;padding:.4rem}
.result{font-size:1.3rem;font-weight:700}
a{color:#0b3d91}
.ltr{white-space:nowrap}
code{direction:ltr;unicode-bidi:isolate}
@media (min-width:48rem){main{padding:2rem}}
.balance{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;flex-wrap:wrap;margin:.75rem 0;padding:.75rem 1rem;background:#f4f6fb;border-radius:.5rem}
.balance .amount{margin:0}
a.button{display:inline-flex;align-items:center;font-size:1.05rem;font-weight:700;padding:.7rem 1.4rem;border-radius:.5rem;border:2px solid #0b3d91;text-decoration:none;min-height:2.75rem}
a.button.secondary{background:#fff;color:#0b3d91}
button.danger{background:#b3261e;border-color:#b3261e}
/* Thaana is optically smaller and thinner than Latin at one size and weight: Dhivehi pages are set a
   quarter larger, medium weight and with room for the marks above and below the letters; the Latin kept
   in them (amounts, dates, codes, English) is set back to the size it has on English pages. */
html:lang(dv){font-size:125%;font-weight:500;line-height:1.8}
html:lang(dv) :is(.ltr,[lang=en],code,.secret):not(:is(.ltr,[lang=en],code,.secret) *){font-size:.8em}
html:lang(dv) input{line-height:1.5}
`
export const listCss = `
ul.items{list-style:none;margin:0;padding:0}
ul.items li{padding:.6rem 0;border-block-end:1px solid #dfe3ec}
ul.items li:last-child{border-block-end:0}
ul.items form{margin-top:.4rem}
ul.items p{margin:0}
li.payment .line{display:flex;justify-content:space-between;gap:1rem;align-items:baseline}
li.payment .sum{font-weight:700;white-space:nowrap}
ul.items .note{font-size:.9rem}
`
export const dashboardCss = `
main.wide{max-width:72rem}
nav.sections{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.5rem 0 0}
nav.sections a[aria-current]{font-weight:700;text-decoration:none}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.8rem;font-weight:700;background:#f4a300;color:#1f1300}
.badge.live{background:#1b7f3b;color:#fff}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:start;padding:.45rem .5rem;border-block-end:1px solid #dfe3ec;vertical-align:top}
th{color:#3d4a66;font-weight:600}
@media (max-width:40rem){
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
table.stack tr{border-block-end:1px solid #dfe3ec;padding-block:.5rem}
table.stack td{display:grid;grid-template-columns:minmax(6rem,40%) 1fr;gap:.75rem;border:0;padding:.15rem 0}
table.stack td::before{content:attr(data-label);color:#3d4a66;font-weight:600}
table.stack td>span{min-width:0;overflow-wrap:anywhere}
}
code,.secret{font-family:ui-monospace,monospace;word-break:break-all}
fieldset{border:1px solid #dfe3ec;border-radius:.5rem;margin:.75rem 0}
fieldset label{display:inline-flex;gap:.35rem;font-weight:400;margin:.2rem 1rem .2rem 0}
input[type=url],input[type=password],select{width:100%;font-size:1rem;padding:.55rem .65rem;border:2px solid #8a94a8;border-radius:.5rem}
form.inline{display:inline}
fieldset{min-width:0}
fieldset label{max-width:100%;overflow-wrap:anywhere}
table.facts th{width:min(11rem,35%)}
table.facts td{overflow-wrap:anywhere}
pre.envelope{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f6fa;padding:.75rem;border-radius:.5rem;font-size:.85rem;text-align:left}
figure.qr{margin:1rem 0;text-align:center}
img.qr{width:14rem;height:14rem;image-rendering:pixelated}
form.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(14rem,100%),1fr));gap:0 1rem}
form.filters input[type=text],form.filters input[type=date]{width:100%;font-size:1rem;padding:.55rem .65rem;border:2px solid #8a94a8;border-radius:.5rem}
form.filters .actions{grid-column:1/-1;align-items:center}
ul.summary{list-style:none;margin:0;padding:0;overflow-wrap:anywhere}
code.word{word-break:normal;overflow-wrap:break-word}
`
