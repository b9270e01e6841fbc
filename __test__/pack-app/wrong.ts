// Wrong uses: __test__/pack.test.js asserts tsc reports exactly the marked errors, which shows the
// packed index.d.ts is the one in use (an untyped or `any` import would accept these).
import { GenkitForMaple } from "genkit-for-maple"

new GenkitForMaple(42) // error: TS2559
new GenkitForMaple().flush() // error: TS2339
