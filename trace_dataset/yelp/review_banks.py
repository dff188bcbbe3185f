"""The sentence banks the synthetic reviews are composed from (data for `trace_dataset.yelp.review_text`):
per POI type and aspect, positive / negative / mixed sentences with `{slot}` fields the composer fills."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Shared small banks
# ---------------------------------------------------------------------------------------------------
COMPANIONS = (
    "We", "My wife and I", "My husband and I", "A group of us from work", "I", "My family of four",
    "Two friends and I", "My partner and I", "My parents and I", "Our book club", "My sister and I",
    "A few coworkers and I", "My teenage son and I", "Our whole softball team",
)  # fmt: skip
OCCASIONS = (
    "on a Friday night", "during a work trip", "for my sister's birthday", "after a conference downtown",
    "on our first trip to {city}", "before a show", "on a rainy Tuesday", "over a long weekend",
    "for our anniversary", "on a Sunday afternoon", "while visiting family in {city}", "on a road trip",
    "during spring break", "after a ballgame", "on a last-minute getaway", "for a graduation celebration",
    "on a layover", "in the middle of a heat wave", "on a quiet weeknight", "the day before flying home",
)  # fmt: skip
FIRST_NAMES = (
    "Maria", "James", "Tasha", "Devon", "Carlos", "Priya", "Hank", "Leah", "Marcus", "Jenny", "Omar",
    "Beth", "Andre", "Kim", "Luis", "Rosa", "Tyler", "Nadia", "Grant", "Ivy", "Dominic", "Paula",
    "Reggie", "Sofia", "Walt", "Abby", "Felix", "Gloria", "Trent", "Yolanda", "Miles", "Keisha",
)  # fmt: skip

# ---------------------------------------------------------------------------------------------------
# Restaurants
# ---------------------------------------------------------------------------------------------------
FOOD_POS_ADJ = (
    "perfectly seasoned", "incredibly tender", "bursting with flavor", "cooked just right", "fresh and bright",
    "rich without being heavy", "crispy outside and juicy inside", "generous and delicious",
    "the best I have had in years", "beautifully plated", "smoky and tender", "spot on", "packed with flavor",
    "light and perfectly balanced", "hot, fresh and huge", "outstanding", "simply excellent",
)  # fmt: skip
FOOD_NEG_ADJ = (
    "bland", "overcooked", "lukewarm by the time it reached us", "oddly salty", "dry and chewy", "greasy",
    "underwhelming for the price", "soggy", "clearly reheated", "missing any real seasoning", "cold in the middle",
    "swimming in sauce", "tough and stringy", "burnt on one side",
)  # fmt: skip
FOOD_MIX_ADJ = (
    "decent but not memorable", "good, if a little salty", "fine, nothing special", "solid but a touch small",
    "tasty but lukewarm", "okay, though it needed more seasoning", "good on flavor but short on portion",
)  # fmt: skip
FOOD_POS = (
    "The {item} was {pos}.", "Do not skip the {item}; it was {pos}.",
    "We split the {item} and the {item2}, and both were {pos}.",
    "Their {item} is {pos} and easily the highlight of the menu.", "I still think about the {item}.",
    "Get the {item}, trust me.", "The {item2} was {pos}, and the {item} might have been even better.",
    "Everyone at the table fought over the {item}.", "I came back two days later just for the {item}.",
    "The {item} lived up to the hype: {pos}.", "Our favorite dish was the {item}, {pos}.",
)  # fmt: skip
FOOD_NEG = (
    "The {item} was {neg}.", "I ordered the {item} and it came out {neg}.",
    "Sadly the {item} was {neg}, and the {item2} was not much better.",
    "For a place known for its {item}, ours was {neg}.", "The {item2} arrived {neg} and we sent it back.",
    "My {item} was {neg}, which was a real letdown.", "The {item} tasted like it had been sitting under a lamp.",
)  # fmt: skip
FOOD_MIX = (
    "The {item} was {mix}, but the {item2} was {pos}.", "The {item} was {mix}.",
    "I liked the {item2}, though the {item} was {mix}.", "Food was hit or miss: the {item} was {pos} but the {item2} was {neg}.",
)  # fmt: skip

SERVICE_POS = (
    "Our server, {staff}, was attentive and knew the menu inside out.",
    "Service was warm and quick even though the place was packed.",
    "{staff} behind the bar made great suggestions and kept our glasses full.",
    "The staff checked on us just enough without hovering.",
    "{staff} went out of the way to accommodate our allergies.",
    "The hostess found us a table in minutes even without a reservation.",
    "Everyone from the host to the bussers was friendly and genuinely welcoming.",
)  # fmt: skip
SERVICE_NEG = (
    "We waited {wait} minutes before anyone took our order.",
    "Our server seemed annoyed every time we asked for something.",
    "Service was painfully slow and our drinks sat empty for ages.",
    "The host was dismissive when we asked about our table.",
    "They forgot half our order and never apologized.",
    "We had to flag down three different people just to get the check.",
)  # fmt: skip
SERVICE_MIX = (
    "Service was friendly but slow once the dinner rush hit.",
    "{staff} was sweet, but the kitchen was clearly behind.",
    "The staff meant well, although our entrees came out ten minutes apart.",
)  # fmt: skip

DECOR = (
    "exposed brick and Edison bulbs", "white tablecloths and candlelight", "a long marble bar",
    "murals by local artists", "big windows looking onto the street", "string lights over the patio",
    "vintage photos of the neighborhood", "dark wood booths", "an open kitchen you can watch",
    "a courtyard with a fountain", "mismatched thrift-store chairs", "a wall of vinyl records",
    "hanging plants everywhere", "a copper-topped bar", "old church pews for seating",
)  # fmt: skip
NOISE_WORDS = {
    "quiet": ("quiet", "calm", "peaceful"),
    "average": ("relaxed", "comfortable", "easygoing"),
    "loud": ("lively", "loud", "buzzing"),
    "very_loud": ("loud", "packed and loud", "raucous"),
}
AMBIENCE_WORDS = {
    "romantic": "romantic", "intimate": "intimate", "classy": "elegant", "upscale": "upscale",
    "trendy": "trendy", "hipster": "trendy", "casual": "casual", "divey": "divey", "touristy": "touristy",
}  # fmt: skip
AMBIENCE_POS = (
    "The dining room is {amb1} and {amb2}, with {decor}.",
    "It has a {amb1} vibe, with {decor}, perfect for {fits}.",
    "Loved the {amb1} atmosphere and the {decor}.",
    "It feels {amb1} without trying too hard: {decor} and good music at a sensible volume.",
)  # fmt: skip
AMBIENCE_NEG = (
    "It was so loud we could barely hear each other across the table.",
    "The room felt cramped and a little dingy, and the music was far too loud.",
    "The space itself felt tired, with sticky tables and flickering lights.",
    "Despite the {decor}, the room felt cold and uninviting.",
)  # fmt: skip
AMBIENCE_MIX = (
    "The space is {amb1}, though it gets noisy when it fills up.",
    "Nice {decor}, but the tables are packed a little too close together.",
)  # fmt: skip
FITS = (
    "a date night", "catching up with old friends", "a quiet dinner alone", "a celebration", "a business dinner",
    "a family meal", "a low-key lunch",
)  # fmt: skip

VALUE_POS = {
    1: ("Very cheap: two of us ate well for under ${amount}.", "Great value, and a real budget find.",
        "Honestly some of the best cheap eats in {city}.", "Affordable prices and big portions, so great value."),
    2: ("Prices are fair and portions generous, so solid value.", "Affordable for the quality, about ${amount} for two.",
        "Good value for {city}, and nobody left hungry."),
    3: ("Not cheap at about ${amount} for two, but worth every penny for a special night.",
        "A little expensive, yet the quality justifies it.", "It is upscale pricing, and the experience matches it."),
    4: ("It is a splurge, an upscale, luxury experience from start to finish.",
        "Expensive, yes, around ${amount} for two, but the best meal of our trip.",
        "Pure luxury: worth saving up for."),
}
VALUE_NEG = {
    1: ("Cheap, but you get what you pay for.", "Even at budget prices it did not feel like good value."),
    2: ("A bit pricey for what you get; ${amount} for two felt steep.", "Not great value, the portions have shrunk."),
    3: ("Expensive for portions this small.", "At ${amount} for two we expected a lot more."),
    4: ("At these prices I expected far better; way too expensive for what arrived.",
        "Upscale prices, but nothing about the meal felt like luxury."),
}
VALUE_MIX = (
    "Prices are a touch high, but the portions make up for it.",
    "About ${amount} for two, which is fair though not a bargain.",
)  # fmt: skip

RESTAURANT_EXTRAS = {
    # (attribute, value) -> sentences; {slots} as elsewhere
    ("outdoor_seating", True): (
        "The outdoor seating on the patio is lovely on a warm evening.",
        "We grabbed a table on the patio; the outdoor seating has a great view of the street.",
    ),
    ("outdoor_seating", False): ("There is no outdoor seating, which is a shame on a nice day.",),
    ("dogs_allowed", True): ("They are pet-friendly, so we brought our dog and she got a water bowl.",),
    ("wifi", "free"): ("Free wifi made it an easy spot to work for an hour.",),
    ("reservations", True): ("Make reservations on weekends; it fills up fast.", "We booked reservations online and were seated right away."),
    ("reservations", False): ("They do not take reservations, so expect a wait at peak times.",),
    ("good_for_kids", True): ("Very family-friendly, with a kids menu and plenty of high chairs.",),
    ("good_for_kids", False): ("It is more of an adults spot; I would not bring young kids.",),
    ("wheelchair_accessible", True): ("It is wheelchair accessible, with a ramp and a roomy restroom.",),
    ("happy_hour", True): ("Happy hour is a steal, with half-price cocktails and snacks until six.",),
    ("has_tv", True): ("There are TVs over the bar if you want to catch the game.",),
    ("alcohol", "full_bar"): ("The cocktails were creative and strong; try the house old fashioned.",
                              "Full bar with a short but smart list of cocktails."),
    ("alcohol", "beer_and_wine"): ("They only serve beer and wine, but the list is well chosen.",),
    ("alcohol", "none"): ("No alcohol here, but the house lemonade is great.",),
    ("delivery", True): ("We ordered delivery the next night and it arrived hot.",),
    ("takeout", True): ("Takeout is quick if you call ahead.",),
}
DIET_SENTENCES = {
    "vegan": "Plenty of vegan options, and they are clearly marked on the menu.",
    "vegetarian": "My vegetarian friend had lots of choices beyond the usual salad.",
    "gluten-free": "They have a dedicated gluten-free menu and took my celiac seriously.",
    "halal": "All the meat is halal, which made it easy for our group.",
    "kosher": "It is certified kosher, which is rare around here.",
    "dairy-free": "The kitchen happily made my dish dairy-free.",
    "soy-free": "They walked me through which dishes were soy-free.",
}
MEAL_SENTENCES = {
    "breakfast": "Breakfast here is the move; get there before nine.",
    "brunch": "Weekend brunch is the best time to come, with bottomless mimosas.",
    "latenight": "The kitchen stays open late, one of the few good late-night options nearby.",
    "dessert": "Save room for dessert; the pastry case alone is worth the trip.",
    "lunch": "Lunch specials are quick and filling.",
    "dinner": "Dinner service is when the kitchen really shines.",
}

# ---------------------------------------------------------------------------------------------------
# Location and parking (all types)
# ---------------------------------------------------------------------------------------------------
LOCATION_NEAR = (
    "It is a short walk from {landmark}, so it was easy to fit in.",
    "The location is great, just a few blocks from {landmark}.",
    "Very walkable from {landmark} and the surrounding streets.",
    "We walked over from {landmark} in about ten minutes.",
)  # fmt: skip
LOCATION_FAR = (
    "It is a bit out of the way, so plan on driving or a rideshare.",
    "Not really walkable from downtown, but worth the drive.",
    "The neighborhood is residential, away from the tourist crowds.",
)  # fmt: skip
PARKING_SENTENCES = {
    "lot": ("There is a free parking lot right out front.", "Parking was easy thanks to the big lot."),
    "street": ("Street parking was easy to find on a weeknight.", "Street parking only, which can be tough on weekends."),
    "garage": ("We used the parking garage next door.", "There is a garage around the corner for parking."),
    "valet": ("Valet parking is available and quick.",),
    "validated": ("They validate parking at the garage, a nice touch.",),
    None: ("Parking is a nightmare around here, so take a cab.", "Finding parking took us twenty minutes."),
}

# ---------------------------------------------------------------------------------------------------
# Hotels
# ---------------------------------------------------------------------------------------------------
ROOM_POS = (
    "Our room was spacious and spotless, with {item}.", "The room had {item}, which we loved.",
    "The bed was incredibly comfortable and the room was very clean.",
    "We were upgraded to a room with {item} at no charge.", "The bathroom was modern and clean, with great water pressure.",
    "Blackout curtains and a comfy bed meant we slept like babies.",
)  # fmt: skip
ROOM_NEG = (
    "The room smelled musty and the carpet was stained.", "The bathroom had mold around the tub and a leaky faucet.",
    "Our room was tiny and the air conditioner rattled all night.", "The sheets had holes and the room clearly had not been cleaned well.",
    "The promised {item} turned out to be a fantasy; our room faced a parking lot.",
)  # fmt: skip
ROOM_MIX = (
    "The room was clean but dated, and the bed was on the firm side.",
    "Nice {item}, though the bathroom needs an update.",
)  # fmt: skip
FRONT_DESK_POS = (
    "{staff} at the front desk checked us in early and gave great restaurant tips.",
    "The staff were friendly and helpful from check-in to check-out.",
    "{staff} at the concierge desk booked us a great dinner and a tour.",
    "Housekeeping was excellent and the front desk answered every call quickly.",
)  # fmt: skip
FRONT_DESK_NEG = (
    "Check-in took forty minutes and the front desk staff seemed overwhelmed.",
    "The front desk lost our reservation and was rude about it.",
    "Nobody answered the front desk phone all evening.",
)  # fmt: skip
FRONT_DESK_MIX = ("Staff were polite, but check-in was slow and our room was not ready until after four.",)
HOTEL_AMENITIES = {
    "pool": ("The {pool_kind} pool was the highlight, clean and never too crowded.",
             "The pool was closed for repairs during our stay, which was disappointing."),
    "gym": ("The gym is small but has everything you need for a quick workout.",
            "The gym was just a treadmill and some dumbbells."),
    "shuttle": ("The free airport shuttle ran every half hour and saved us a cab fare.",
                "We waited almost an hour for the shuttle."),
    "breakfast": ("The free breakfast buffet had fresh waffles, eggs and real coffee.",
                  "Breakfast was stale pastries and weak coffee."),
    "spa": ("The spa is worth booking; the massage was excellent.", "The spa was overpriced for a basic massage."),
    "bar": ("The lobby bar makes a good cocktail and stays lively at night.", "The hotel bar closed early and drinks were pricey."),
}
HOTEL_WIFI = {
    "free": ("The free wifi was fast enough for video calls.", "Free wifi, but it kept dropping in our room."),
    "paid": ("Wifi costs extra, which feels outdated.", "They charge for wifi, and it was slow anyway."),
    "no": ("There is no wifi in the rooms, so bring a hotspot.", "No wifi at all, which surprised us."),
}
HOTEL_NOISE_POS = ("Our room was quiet at night even though we were downtown.", "Very quiet, we never heard the neighbors.")
HOTEL_NOISE_NEG = ("The walls are thin and we heard every door slam in the hallway.",
                   "Street noise kept us up past two in the morning.")
HOTEL_VALUE_POS = ("A great value for the location, about ${amount} a night.", "Affordable rates and no surprise fees.",
                   "Worth the splurge for a special trip.", "Budget friendly without feeling cheap.")
HOTEL_VALUE_NEG = ("Expensive for what you get, and the resort fee is a rip-off.", "At ${amount} a night I expected much better.",
                   "Cheap for a reason; you get what you pay for.")
HOTEL_PETS = ("They are pet-friendly, and our dog got a bed and treats at check-in.",)
HOTEL_ACCESS = ("Our accessible room had a roll-in shower and grab bars, and the wheelchair access was easy throughout.",)

# ---------------------------------------------------------------------------------------------------
# Attractions
# ---------------------------------------------------------------------------------------------------
EXHIBIT_POS = (
    "The {item} alone is worth the trip.", "We spent over an hour in the {item} and could have stayed longer.",
    "Do not miss the {item}; it was the highlight of our visit.", "The {item} was fascinating and beautifully done.",
    "My favorite part was the {item}.", "The {item} blew us away.",
)  # fmt: skip
EXHIBIT_NEG = (
    "The {item} was closed for renovation, and the rest felt dated.", "The {item} was underwhelming and hard to find.",
    "Half the {item} was roped off with no explanation.", "We came for the {item}, and it was honestly a letdown.",
)  # fmt: skip
EXHIBIT_MIX = ("The {item} was interesting, though a bit small.", "We enjoyed the {item}, but the signage was confusing.")
GUIDE_POS = (
    "Our guide, {staff}, was hilarious and full of stories about {city}.",
    "{staff} was a fantastic guide who clearly loves local history.",
    "The guide kept the group engaged the whole time and answered every question.",
)  # fmt: skip
GUIDE_NEG = ("Our guide mumbled through a script and rushed every stop.", "The guide showed up twenty minutes late and seemed bored.")
CROWD_POS = ("Go early on a weekday to beat the crowds; we nearly had it to ourselves.",
             "It never felt crowded, even on a Saturday.")
CROWD_NEG = ("It was packed shoulder to shoulder and the lines were endless.", "Way too crowded; we could barely see anything.")
KIDS_POS = ("Kids loved it, and it is very family-friendly, with plenty of hands-on activities.",
            "Great for families; our kids did not want to leave.")
KIDS_NEG = ("Not much here to keep young kids entertained.",)
VIEWS = ("The views from the {spot} are incredible at sunset.", "Bring a camera for the views from the {spot}.")
VIEW_SPOTS = ("top deck", "overlook", "rooftop", "upper terrace", "east lawn", "balcony")
ADMISSION_POS = ("Admission is about ${amount}, a great value for what you get.", "It is free to get in, which makes it a great budget stop.",
                 "Tickets were affordable and the visit was worth every penny.")
ADMISSION_NEG = ("Overpriced at ${amount} per person for what amounts to an hour.", "Expensive tickets and then extra fees for everything inside.")
NIGHT_POS = (
    "The {item} was the best part of the night.", "Great {item}, and the bartenders really know their craft.",
    "The cocktails are excellent, especially the {item}.", "We stayed for the {item} and ended up closing the place down.",
)  # fmt: skip
NIGHT_NEG = ("The {item} was a mess and the drinks were watered down.", "Overpriced drinks and the {item} was a letdown.")
NIGHT_VIBE_POS = ("It has a lively, fun crowd and a great late-night scene.", "Loud in the best way: live music, dancing, good energy.",
                  "Cozy and intimate, the kind of bar where you end up chatting with strangers.")
NIGHT_VIBE_NEG = ("It was so loud and packed we left after one drink.", "The crowd was rowdy and the bouncer was rude.")

# ---------------------------------------------------------------------------------------------------
# Other businesses (not tourism; exercise the classifier)
# ---------------------------------------------------------------------------------------------------
OTHER_POS = (
    "They were professional, on time and fairly priced.", "{staff} explained everything clearly and fixed the problem fast.",
    "Easy to book an appointment and the whole thing took less than an hour.", "Honest, friendly and thorough; I will be back.",
)  # fmt: skip
OTHER_NEG = (
    "They quoted one price and charged another.", "I waited over an hour past my appointment time.",
    "The staff were rude and the job had to be redone.", "Nobody returned my calls for a week.",
)  # fmt: skip

# ---------------------------------------------------------------------------------------------------
# Openers, tips and closers
# ---------------------------------------------------------------------------------------------------
VISIT_VERBS = {
    "restaurant": ("came in for {meal}", "stopped by for {meal}", "finally tried this place for {meal}", "grabbed {meal} here"),
    "hotel": ("stayed here {nights} nights", "booked a room here for {nights} nights", "spent {nights} nights here"),
    "attraction": ("spent {part} here", "visited", "checked this out", "finally made it here"),
    "other": ("needed help", "went in for an appointment", "called them"),
}
MEALS = ("dinner", "lunch", "a late lunch", "brunch", "breakfast", "a quick bite", "happy hour", "a birthday dinner")
DAY_PARTS = ("an afternoon", "a morning", "a few hours", "a long Saturday", "most of a day", "an evening")
TIPS = (
    "Tip: {tip}.", "Pro tip: {tip}.", "One piece of advice: {tip}.", "If you go, {tip}.",
)  # fmt: skip
TIP_BODIES = {
    "restaurant": ("ask about the daily specials", "sit at the bar if you are alone", "order more sides than you think",
                   "go early to avoid the line", "check their hours because they close between lunch and dinner",
                   "split a few plates so you can try more"),
    "hotel": ("ask for a room on a high floor", "skip the valet and use the garage across the street",
              "join the loyalty program for free late checkout", "request a room away from the elevator",
              "book directly for a better rate"),
    "attraction": ("buy tickets online to skip the line", "wear comfortable shoes", "bring water, especially in summer",
                   "check the schedule for free days", "leave at least two hours", "grab a map at the entrance"),
    "other": ("book online", "ask for a written quote", "call ahead"),
}
CLOSERS_POS = (
    "Cannot wait to come back next time we are in {city}.", "Highly recommend.", "Five stars, no question.",
    "We will definitely be back.", "A must if you are visiting {city}.", "Already planning our next visit.",
    "This is now on our list of favorites in {city}.",
)  # fmt: skip
CLOSERS_MIX = (
    "Worth a try if you are nearby, but manage your expectations.", "Not bad, not amazing.",
    "I might give it another shot.", "Decent overall, with room to improve.",
)  # fmt: skip
CLOSERS_NEG = (
    "We will not be back.", "Save your money.", "Hard pass next time.", "Really disappointing overall.",
    "There are much better options in {city}.",
)  # fmt: skip
