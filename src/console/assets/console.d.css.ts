// console.css imported `with { type: 'text' }` (../assets.ts): its contents, bundled into the executable.
declare const text: string
export default text
