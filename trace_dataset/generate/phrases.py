"""The template backend's paraphrase grammar: several wordings for every slot of both roles.

All of it is authored here (never review text), so the non-quote text of a dialogue is ours to release.
Placeholders: {name} POI name, {city}, {type}, {L} landmark, {cat} category, {word} price word, {d} distance,
{price} dollar signs, {stars}, {n} review count, {what} the human name of an aspect, {a_what} the same with its
indefinite article ("an elegant"), {context}. A template never writes an article before a placeholder itself
("a {what}" would give "a elegant"), and no name ends with the word a template puts after it
(tests/trace_dataset/generate/test_generate_language.py checks both, and scans generated dialogues for a/an and doubled words).
Price words (constants.PRICE_KEYWORDS) appear only where the user states a price constraint ({word}).
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Names of constraint values
# ---------------------------------------------------------------------------------------------------
AMENITY_NAMES: dict[str, tuple[str, ...]] = {
    "outdoor_seating": ("outdoor seating", "a patio", "tables outside"),
    "good_for_kids": ("a kid-friendly setup", "a welcome for children", "space for the kids"),
    "good_for_groups": ("room for a group", "space for a bigger party", "group-friendly seating"),
    "reservations": ("reservations", "the option to book ahead", "bookable tables"),
    "takeout": ("takeout", "food to carry out", "a takeout option"),
    "wheelchair_accessible": ("wheelchair access", "step-free access", "an accessible entrance"),
    "dogs_allowed": ("a dog-friendly policy", "room for my dog", "a welcome for dogs"),
    "happy_hour": ("a happy hour", "happy-hour deals", "early-evening specials"),
    "wifi": ("free wifi", "a reliable internet connection", "wifi I can work on"),
    "parking": ("parking", "somewhere to leave the car", "easy parking"),
    "full_bar": ("a full bar", "a proper cocktail list", "a real bar"),
}
ASPECT_NAMES: dict[str, tuple[str, ...]] = {
    "pool": ("a pool", "a pool for cooling off", "a swimming pool"),
    "gym": ("a gym", "a fitness room", "somewhere to work out"),
    "breakfast": ("breakfast", "a morning breakfast", "breakfast on site"),
    "shuttle": ("a shuttle", "a shuttle service", "shuttle rides"),
    "views": ("good views", "a nice view", "scenery worth looking at"),
    "clean": ("spotless rooms", "clean rooms", "real cleanliness"),
    "spacious": ("spacious rooms", "room to spread out", "a roomy layout"),
    "staff": ("friendly staff", "helpful people at the desk", "warm service"),
    "history": ("real history", "a historic angle", "a story behind it"),
    "exhibits": ("strong exhibits", "a good collection", "interesting displays"),
    "guided_tours": ("guided tours", "a knowledgeable guide", "a guided visit"),
    "live_music": ("live music", "live performances", "a band playing"),
    "trails": ("walking trails", "paths to hike", "trails to explore"),
    "shade": ("some shade", "shady spots", "cover from the sun"),
}
AMBIENCE_NAMES: dict[str, tuple[str, ...]] = {
    "romantic": ("romantic",), "intimate": ("intimate", "cosy and intimate"), "classy": ("classy", "elegant"),
    "trendy": ("trendy", "stylish"), "casual": ("casual", "laid-back"), "hipster": ("quirky", "slightly offbeat"),
    "upscale": ("polished",),
}  # fmt: skip
DIETARY_NAMES: dict[str, tuple[str, ...]] = {
    "vegan": ("vegan options", "proper vegan dishes", "plant-based choices"),
    "vegetarian": ("vegetarian options", "good meat-free dishes", "vegetarian choices"),
    "gluten-free": ("gluten-free options", "gluten-free dishes", "a gluten-free menu"),
}
MEAL_NAMES: dict[str, tuple[str, ...]] = {
    "brunch": ("brunch", "a weekend brunch", "a late-morning menu"),
    "breakfast": ("breakfast", "an early breakfast", "a morning menu"),
    "latenight": ("late-night food", "a kitchen open late", "food after dark"),
    "dessert": ("good desserts", "something sweet to finish", "a dessert menu"),
}
NOISE_NAMES: dict[str, tuple[str, ...]] = {
    "quiet": ("quiet", "calm", "peaceful"),
    "lively": ("lively", "buzzing", "full of energy"),
}

TYPE_NOUNS: dict[str, tuple[str, ...]] = {
    "restaurant": ("a place to eat", "a restaurant", "somewhere to eat", "a good spot for a meal", "a dinner spot"),
    "hotel": ("a hotel", "a place to stay", "somewhere to stay", "a hotel for a few nights", "a room in town"),
    "attraction": ("something to see", "an attraction", "a place to visit", "something worth doing",
                   "a spot to spend the afternoon"),
}  # fmt: skip
TYPE_SHORT: dict[str, str] = {"restaurant": "restaurant", "hotel": "hotel", "attraction": "attraction"}

RATING_PHRASES = ("rated {v} stars or better", "rated at least {v} stars", "rated {v} stars or higher")

# (never "from {L}": reviews say "a short walk from <landmark> ...", and six shared words would be a copy)
RADIUS_PHRASES: dict[float, tuple[str, ...]] = {
    1.5: ("within walking distance of {L}", "within about 1.5 km of {L}", "right by {L}, 1.5 km at most"),
    3.0: ("within about 3 km of {L}", "close to {L}", "near {L}, say 3 km at most"),
    5.0: ("within 5 km or so of {L}", "somewhere around {L}, up to 5 km out", "in the general area of {L}"),
}

# ---------------------------------------------------------------------------------------------------
# User side
# ---------------------------------------------------------------------------------------------------
GREETINGS: dict[str, tuple[str, ...]] = {
    "casual": ("Hey!", "Hi there!", "Hey, quick one.", "Hiya!", "Hi!"),
    "warm": ("Hello!", "Hi, I hope you can help!", "Hello there!", "Hi, lovely to chat."),
    "brisk": ("Hi.", "Hello, I need a recommendation.", "Quick question.", "Hi, short on time here."),
    "formal": ("Good afternoon.", "Hello,", "Good day.", "Hello, thank you for your help."),
}
CONTEXT_SENTENCES = (
    "I'm in {city} on {context}.", "We're in {city} for {context}.", "I'm visiting {city} on {context}.",
    "This is {context} in {city}.", "I've arrived in {city} for {context}.",
)  # fmt: skip
REQUESTS = (
    "Could you help me find {type}?", "I'm looking for {type}.", "Can you suggest {type}?",
    "I need {type}.", "What would you recommend for {type}?", "Help me pick {type}?",
    "I'd love a suggestion for {type}.",
)  # fmt: skip

# a stated constraint, one sentence, keyed by kind (with {what}) or by constraint key
STATE: dict[str, tuple[str, ...]] = {
    "price": ("Something {word} would be ideal.", "I'd like to keep it {word}.", "It needs to be {word}.",
              "My price range is {word}.", "Let's keep it on the {word} side."),
    "price:budget": ("I'm on a budget.", "Something budget-friendly would be ideal.", "We have a tight budget.",
                     "It has to fit a budget."),
    "rating": ("I only want places {what}.", "It should be {what}.", "I'd prefer somewhere {what}."),
    "location": ("It should be {what}.", "Ideally {what}.", "I'd like to be {what}.",
                 "Location matters: {what}."),
    "noise": ("Somewhere {what}, please.", "I'd like it to be {what}.", "The setting should feel {what}.",
              "I'm hoping for an atmosphere that's {what}."),
    "ambience": ("I'd like the feel to be {what}.", "Something {what} would suit me.",
                 "The vibe should be {what}.", "I'm after {a_what} feel."),
    "amenity": ("It needs {what}.", "I'd really like {what}.", "{What} is a must for me.",
                "Please make sure it has {what}."),
    "dietary": ("I need {what}.", "There have to be {what}.", "{What} are essential for me."),
    "meal": ("I'm thinking of {what}.", "It's for {what}, really.", "I'd like somewhere that does {what}."),
    "aspect": ("I'd like {what}.", "{What} would make it for me.", "Ideally it has {what}.",
               "I'm hoping for {what}."),
    "category": ("I'm in the mood for {what}.", "I'm leaning towards {what}.", "Something in the {what} line.",
                 "{What} is what I'm after."),
}
ANSWER_LEADS = (
    "Good question.", "Sure.", "Let me think.", "Yes, actually.", "Hmm, okay.", "Right.", "Definitely.", "",
)  # fmt: skip
REJECT_LEADS = (
    "{name} won't work for me.", "I'm not sold on {name}.", "Hmm, {name} isn't quite right.",
    "I'd rather skip {name}.", "{name} doesn't fit.", "Thanks, but {name} is not for me.",
    "I'll pass on {name}.",
)  # fmt: skip
REJECT_BRIDGES = (
    "Can you find something else?", "What else do you have?", "Is there another option?",
    "Could you look again with that in mind?", "Any alternatives?", "Try again?", "",
)  # fmt: skip
REVISE_LEADS = (
    "Actually, change of plans.", "Wait, I need to change something.", "Sorry, our plans shifted.",
    "Scratch that, something changed.", "Small twist on what I said earlier.",
)  # fmt: skip
REVISE = {
    "location": ("We're now based near {new} instead of {old}, so {name} is too far.",
                 "Forget {old}; we'll be around {new}, and {name} is not close enough to it."),
    "category": ("I've gone off {old}; I'd rather have {new} now, which rules out {name}.",
                 "Instead of {old} I'm now keen on {new}, so {name} is out."),
    "noise": ("I said {old} before, but now I want somewhere {new}, and {name} isn't that.",
              "Rather than {old}, I'd now like it {new}; {name} doesn't match."),
    "ambience": ("Earlier I said {old}, but I'd now prefer {new}, so {name} isn't it.",
                 "Change of mood: less {old}, more {new}. {name} doesn't fit that."),
}
REASON_EXPLICIT = {
    "price": ("it's {price}, over my limit", "it costs more than I want to spend"),
    "rating": ("{stars} stars is lower than I'd like", "its rating is a bit low for me"),
    "location": ("{L} is about {d} km away, too far", "it's {d} km out, measured to {L}, which is too far"),
    "category": ("I'm not after that kind of place", "it isn't the kind of place I meant"),
    "default": ("it doesn't have {what}", "it lacks {what}", "it's missing {what}"),
    "noise": ("it's not {what} enough", "it sounds anything but {what}"),
}
REASON_MISSING = (
    "nobody mentions {what} there", "I see nothing about {what} in what people say",
    "there's no sign of {what}", "I can't tell it has {what}",
)  # fmt: skip
REASON_MISSING_ADJ = (
    "nobody describes it as {what}", "I don't get the sense it's {what}", "no one calls it {what}",
)  # fmt: skip
REASON_PRICE_UNKNOWN = ("I can't work out what it costs", "its prices are a mystery to me")
EXTRA_LEADS = (
    "{name} sounds promising.", "Okay, {name} could work.", "Nice, {name} is a contender.",
    "I like the sound of {name}.", "{name} is interesting.",
)  # fmt: skip
COMPARE_ASKS = (
    "How does it compare with another option?", "Can you weigh it against something else?",
    "What would be the closest alternative?", "Could you compare it with one more place?",
    "Is there anything to set beside it?",
)  # fmt: skip
PRIORITY = (
    "{What} matters most to me.", "The main thing for me is {what}.", "Above all I care about {what}.",
)  # fmt: skip
ACCEPT = {
    "casual": ("{name} it is, thanks!", "Perfect, {name} sounds great.", "Sold. I'll go with {name}.",
               "Love it, {name} works."),
    "warm": ("{name} sounds lovely, thank you so much!", "Wonderful, let's do {name}.",
             "That's perfect. {name} it is.", "Thank you, {name} is exactly what I hoped for."),
    "brisk": ("Good. {name}.", "{name} works. Thanks.", "Fine, booking {name}.", "Done: {name}."),
    "formal": ("Thank you, {name} will do nicely.", "Very good, I'll choose {name}.",
               "I appreciate it. {name} it shall be.", "Excellent, {name} suits me well."),
}

# ---------------------------------------------------------------------------------------------------
# System side
# ---------------------------------------------------------------------------------------------------
ASK: dict[str, tuple[str, ...]] = {
    "price": ("Do you have a price range in mind?", "How much would you like to spend?",
              "What sort of spending level works for you?"),
    "rating": ("How picky are you about ratings?", "Do ratings matter much to you?"),
    "location": ("Is there a part of {city} you'd like to be near?", "Where in {city} will you be based?",
                 "Any neighbourhood or landmark you want to stay close to?"),
    "noise": ("How lively or calm should it be?", "Do you prefer a quiet setting or some buzz?"),
    "ambience": ("What kind of atmosphere are you after?", "What feel should the place have?",
                 "Any particular vibe you have in mind?"),
    "amenity": ("Are there any facilities you can't do without?", "Any practical must-haves?",
                "Is there anything on site you need?"),
    "dietary": ("Any dietary needs I should know about?", "Are there foods you need to avoid?"),
    "meal": ("Which meal are you planning around?", "What time of day are you thinking of?"),
    "aspect": ("What would make the place special for you?", "Anything in particular it should offer?",
               "Which features matter most to you?"),
    "category": ("What kind of {type} are you in the mood for?", "Any particular style you prefer?",
                 "Is there a specific kind of place you have in mind?"),
}
ASK_LEADS = (
    "Happy to help.", "Great, let's find you something.", "Sounds fun.", "I can help with that.",
    "Good choice of city.", "Let's narrow it down.", "Sure thing.",
)  # fmt: skip
PERSONA_NODS = (
    "For {your}, that makes sense.", "That fits {your} nicely.", "Noted for {your}.",
    "Good to know for {your}.", "",
)  # fmt: skip
REC_OPENERS = (
    "I'd suggest {name}.", "Try {name}.", "My pick is {name}.", "{name} looks like a strong fit.",
    "Have a look at {name}.", "I think {name} suits you.", "Consider {name}.",
    "{name} stands out for what you described.",
)  # fmt: skip
AFTER_REJECT = (
    "Understood, let's drop {old}.", "Fair enough, {old} is out.", "Got it, {old} is off the table.",
    "Thanks for saying so; {old} is off the list.", "Makes sense, moving on from {old}.",
)  # fmt: skip
AFTER_REVISION = (
    "No problem, I've updated that.", "Got it, new plan.", "Thanks for the update.",
    "Understood, I've switched that around.",
)  # fmt: skip
FACTS = (
    "It's a {price} {short} with {stars} stars from {n} reviews.", "It holds {stars} stars across {n} reviews.",
    "Guests give it {stars} stars ({n} reviews).", "It sits at {stars} stars on {n} reviews.",
)  # fmt: skip
QUOTE_INTROS = (
    "One guest wrote {q}.", "A reviewer put it this way: {q}.", "As one visitor said, {q}.",
    "Reviews back this up: {q}.", "Someone who went noted {q}.", "In one review: {q}.",
)  # fmt: skip
QUOTE_SAME = ("The same reviewer added {q}.", "That review goes on: {q}.", "The same guest also wrote {q}.")
QUOTE_ADDS = (
    "Another added {q}.", "A second review says {q}.", "Someone else mentioned {q}.",
    "And elsewhere: {q}.",
)  # fmt: skip
CLAIM_EVIDENCE = (
    "reviewers mention {what}", "visitors talk about {what}", "people point out {what}",
    "guests bring up {what}",
)  # fmt: skip
CLAIM_EVIDENCE_ADJ = (
    "reviewers describe it as {what}", "visitors call it {what}", "people find it {what}",
)  # fmt: skip
CLAIM_ATTR = ("it offers {what}", "it has {what}", "the listing includes {what}", "you get {what}")
CLAIM: dict[str, tuple[str, ...]] = {
    "price": ("it's {price}, within what you wanted", "at {price} it fits your range"),
    "price_evidence": ("reviewers call it good value", "people say it's easy on the wallet"),
    "rating": ("it has {stars} stars", "it's rated {stars}"),
    "location": ("{L} is about {d} km away", "it sits roughly {d} km out, measured to {L}"),
    "category": ("it's listed under {cat}", "it falls under {cat}"),
    "noise": ("it's known as {what}", "it's listed as {what}"),
    "ambience": ("the feel is {what}", "it's described as {what}"),
    "dietary": ("it has {what}", "{what} are on offer"),
    "meal": ("it serves {what}", "it's a place for {what}"),
}
CLAIM_JOIN = ("{a}, and {b}", "{a}; also, {b}", "{a}, plus {b}")
CLAIM_LEADS = ("For you, ", "On your list: ", "What matters here: ", "In short, ", "")
REC_CLOSERS = (
    "Does that sound right?", "Want to hear more about it?", "How does that sound?", "Shall I go on?",
    "Does it tick your boxes?", "What do you think?", "",
)  # fmt: skip
COMPARE_OPENERS = (
    "Let's weigh {a} against {b}.", "Here's how {a} and {b} compare.", "Two to consider: {a} and {b}.",
    "Side by side, {a} and {b}.", "Comparing {a} with {b}:",
)  # fmt: skip
COMPARE_BOTH_FIT = (
    "{b} also meets everything you asked for, with {stars} stars.",
    "{b} fits your list too and has {stars} stars.",
)  # fmt: skip
COMPARE_MISS_EXPLICIT = (
    "{b}, though, {reason}.", "By contrast {b} {reason}.", "{b} falls short: it {reason}.",
)  # fmt: skip
COMPARE_MISS_EVIDENCE = (
    "For {b}, no reviewer mentions {what}.", "I found nothing about {what} for {b}.",
    "{b} gives no sign of {what} in its reviews.",
)  # fmt: skip
COMPARE_MISS_EVIDENCE_ADJ = (
    "No reviewer calls {b} {what}.", "Nothing in the reviews says {b} is {what}.",
    "I can't confirm that {b} is {what}.",
)  # fmt: skip
VIOLATION = {
    "price": ("costs more, at {price}",),
    "price_unknown": ("has no clear price level",),
    "rating": ("has {stars} stars, under your bar",),
    "location": ("has {L} about {d} km away", "sits {d} km out, measured to {L}"),
    "category": ("is not listed under {cat}",),
    "noise": ("is listed as {level}",),
    "default": ("does not offer {what}", "lacks {what}"),
}
VERDICT_STRONG = (
    "So {a} is the better match for you.", "On balance I'd go with {a}.", "{a} wins this one.",
    "For you, {a} is my pick.", "I'd lean to {a}.",
)  # fmt: skip
VERDICT_TIE = (
    "Both fit and tie on stars; I'd take {a}, which has more reviews behind it.",
    "It's close, but {a} has the larger track record of reviews.",
)  # fmt: skip
VERDICT_BOTH = (
    "Both work; {a} edges ahead on rating.", "Either is fine, but {a} is rated higher.",
    "{a} gets my vote by a small margin.",
)  # fmt: skip
FAREWELLS = {
    "casual": ("Enjoy {name}, have a blast in {city}!", "Have fun at {name}!", "Enjoy, and safe travels!",
               "Great choice, have a good one at {name}!"),
    "warm": ("Wonderful, I hope you love {name}!", "Enjoy every minute at {name}, and enjoy {city}!",
             "So glad I could help. Have a lovely time at {name}!"),
    "brisk": ("Done. Enjoy {name}.", "Good choice. Safe travels.", "All set: enjoy {name}."),
    "formal": ("You're very welcome. I hope {name} exceeds your expectations.",
               "It was a pleasure to help. Enjoy your time in {city}.",
               "Thank you, and I wish you a pleasant visit to {name}."),
}
FAREWELL_CONTEXT = ("Enjoy {your}.", "Make the most of {your}.", "All the best for {your}.", "")
